{#- nbgrader's page, its score columns labelled final or raw (autograder/nbgrader_ext/formgrader_labels.py) -#}
{%- extends 'nbgrader/gradebook_notebooks.tpl' -%}

{%- block table_header -%}
<tr>
  <th>Notebook ID</th>
  <th class="text-center" title="the late penalty taken: the score grades.csv, the LMS files and the feedback show">Avg. Score (final)</th>
  <th class="text-center" title="the points of these cells as graded, before the late penalty: the final score is beside it">Avg. Code Score (raw)</th>
  <th class="text-center" title="the points of these cells as graded, before the late penalty: the final score is beside it">Avg. Written Score (raw)</th>
  <th class="text-center" title="the points of these cells as graded, before the late penalty: the final score is beside it">Avg. Task Score (raw)</th>
  <th class="text-center">Needs Manual Grade?</th>
</tr>
{%- endblock -%}
