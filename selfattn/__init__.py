"""Helper package of the self-attention course: one implementation of every formula.

The book, the notebooks and the tests all call these functions.
"""

from .cost import (
    attention_flops,
    crossover_length,
    layer_flops,
    projection_mlp_flops,
    score_flops,
    score_matrix_bytes,
    weighted_sum_flops,
)
from .experiments import SaturationResult, saturation, score_spread, score_stds
from .lecture import (
    HUNGRY,
    SAT,
    WorkedExample,
    conv_layers_to_connect,
    lecture_shapes,
    receptive_field,
    shift_matrix,
)
from .numerics import (
    attention,
    attention_weights,
    causal_mask,
    chunked_attention,
    padding_mask,
    scaled_scores,
    softmax,
    softmax_jacobian,
)
from .text import SENTENCES, Vocabulary, embed, random_embeddings, tokenize

__all__ = [
    "HUNGRY",
    "SAT",
    "SENTENCES",
    "SaturationResult",
    "Vocabulary",
    "WorkedExample",
    "attention",
    "attention_flops",
    "attention_weights",
    "causal_mask",
    "chunked_attention",
    "conv_layers_to_connect",
    "crossover_length",
    "embed",
    "layer_flops",
    "lecture_shapes",
    "padding_mask",
    "projection_mlp_flops",
    "random_embeddings",
    "receptive_field",
    "saturation",
    "scaled_scores",
    "score_flops",
    "score_matrix_bytes",
    "score_spread",
    "score_stds",
    "shift_matrix",
    "softmax",
    "softmax_jacobian",
    "tokenize",
    "weighted_sum_flops",
]

__version__ = "1.0.0"
