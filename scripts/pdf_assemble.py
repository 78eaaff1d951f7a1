"""Join the book's printed parts into one PDF whose links and outline work on paper and on screen.

Chromium prints each page of the site on its own, so a link in a part points at the local server it was
printed from, and a part knows only its own headings. :func:`join` puts the parts one after another
(pypdf) and then

- turns every link to a printed page (``<local>/book/03-scores-softmax.html#the-score``) into a jump to
  the page of the joined PDF where that element is (Chromium records where each element a link names is,
  as a named destination of its part; ``scripts/book_pdf.py`` names every element with an ``id``), and a
  same-part link (``#the-score``) likewise;
- sends every other link into the site (the index, the downloads) to ``files_base``: the published site
  (``html.baseurl`` in ``_config.yml``), or, while that address is a placeholder, the path from where the
  PDF is published to the site's root (a relative link, which opens the file beside the PDF); links out
  of the site stay as they are;
- drops every link to the PDF itself (the site's pages offer it for download; inside it, such a link
  would open the file the reader has open);
- names every jump it makes (the annotation's ``/NM``, a PDF text string) after its target,
  ``<page>#<id>``, so a reader of the file can check that it lands where the site's link pointed;
- writes an outline (bookmarks): one entry per chapter, titled as in the contents, holding the
  chapter's section headings (as the page shows them, numbered), each leading to its section.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urljoin

from pypdf import PdfReader, PdfWriter
from pypdf.generic import (
    ArrayObject,
    DictionaryObject,
    FloatObject,
    NameObject,
    NullObject,
    TextStringObject,
)

__all__ = ["Part", "join"]


@dataclass(frozen=True)
class Part:
    """One printed page of the site: its PDF, its path in the site (``book/01-....html``), its title and
    its section headings as (level, text, id of the section), level 2 for ``h2``."""

    pdf: Path
    rel: str
    title: str
    headings: tuple[tuple[int, str, str], ...] = ()


def join(front: Path, parts: list[Part], output: Path, local_base: str, files_base: str) -> dict[str, int]:
    """Write ``front`` then ``parts`` to ``output`` with working links and an outline.

    Parameters
    ----------
    front : Path
        The title page and contents (their links name ``local_base + part.rel``).
    parts : list of Part
        In reading order.
    local_base : str
        The address the parts were printed from, ending in ``/``.
    files_base : str
        What links to the site's other files start with: the published site (``html.baseurl``), or a
        path relative to the PDF (``""`` when the PDF is at the site's root); ends in ``/`` unless empty.

    Returns
    -------
    dict of str to int
        How many links were made internal jumps (``"internal"``), sent to ``files_base``
        (``"published"``), left alone (``"outside"``) or dropped as links to the PDF itself (``"dropped"``).
    """
    writer = PdfWriter()
    starts: dict[str, int] = {}  # part path -> index of its first page in the joined PDF
    spots: dict[str, dict[str, tuple[int, float | None]]] = {}  # part path -> id -> (page, top)
    owner: list[str] = []  # per joined page: the part path it came from ("" for the front matter)
    for rel, pdf in [("", front), *((p.rel, p.pdf) for p in parts)]:
        reader = PdfReader(pdf)
        start = len(writer.pages)
        starts[rel] = start
        spots[rel] = {}
        for name, dest in reader.named_destinations.items():
            page = reader.get_destination_page_number(dest)
            spots[rel][unquote(str(name).lstrip("/"))] = (start + page, dest.top)
        for page in reader.pages:
            writer.add_page(page)
            owner.append(rel)

    def jump(page: int, top: float | None) -> ArrayObject:
        return ArrayObject([writer.pages[page].indirect_reference, NameObject("/XYZ"), NullObject(),
                            NullObject() if top is None else FloatObject(top), NullObject()])

    counts = {"internal": 0, "published": 0, "outside": 0, "dropped": 0}
    for index, page in enumerate(writer.pages):
        dropped = []
        for ref in page.get("/Annots") or []:
            annot = ref.get_object()
            if annot.get("/Subtype") != "/Link":
                continue
            if "/Dest" in annot and not isinstance(annot["/Dest"], ArrayObject):  # a link within the part
                name = unquote(str(annot["/Dest"]).lstrip("/"))
                target = spots[owner[index]].get(name, (starts[owner[index]], None))
                annot[NameObject("/Dest")] = jump(*target)
                annot[NameObject("/NM")] = TextStringObject(f"{owner[index] or 'front'}#{name}")
                counts["internal"] += 1
                continue
            action = annot.get("/A")
            uri = str(action.get_object().get("/URI", "")) if action is not None else ""
            if not uri.startswith(local_base):
                counts["outside"] += uri != ""
                continue
            rel, _, fragment = uri.removeprefix(local_base).partition("#")
            rel = unquote(rel) or "index.html"
            if Path(rel).name == output.name:
                dropped.append(ref)
                counts["dropped"] += 1
            elif rel in starts and rel:
                target = spots[rel].get(unquote(fragment), (starts[rel], None)) if fragment else (starts[rel], None)
                del annot["/A"]
                annot[NameObject("/Dest")] = jump(*target)
                annot[NameObject("/NM")] = TextStringObject(f"{rel}#{unquote(fragment)}")
                counts["internal"] += 1
            else:
                annot[NameObject("/A")] = DictionaryObject({
                    NameObject("/S"): NameObject("/URI"),
                    NameObject("/URI"): TextStringObject(urljoin(files_base, uri.removeprefix(local_base))),
                })
                counts["published"] += 1
        if dropped:
            page[NameObject("/Annots")] = ArrayObject([r for r in page["/Annots"] if r not in dropped])

    for part in parts:
        parents = {1: writer.add_outline_item(part.title, starts[part.rel])}
        for level, text, ident in part.headings:
            page, _top = spots[part.rel].get(ident, (starts[part.rel], None))
            parent = parents[max(k for k in parents if k < level)]
            parents = {k: v for k, v in parents.items() if k < level}
            parents[level] = writer.add_outline_item(text, page, parent=parent)
    writer.page_mode = "/UseOutlines"
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("wb") as out:
        writer.write(out)
    return counts
