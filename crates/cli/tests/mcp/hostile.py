"""Hostile files for the two-session survival scenario of python_client.py.

Each one ended every session of a `tackle serve` once (a stack overflow, an allocation of
gigabytes, a loop of minutes); `write_all` puts them into a Location. The PDFs are written by
hand, so the reader meets exactly the structure described, with a correct cross-reference table.
"""

import os
import zlib


def pdf(objects):
    """A PDF of `objects` (bodies of objects 1..n; object 1 is the catalog)."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def stream(data, extra=b"", filters=0):
    """A stream object of `data`, deflated `filters` times (each listed in /Filter)."""
    for _ in range(filters):
        data = zlib.compress(data, 9)
    names = b" ".join([b"/FlateDecode"] * filters)
    filter_entry = b" /Filter [%s]" % names if filters else b""
    return b"<< /Length %d%s %s >>\nstream\n%s\nendstream" % (
        len(data),
        filter_entry,
        extra,
        data,
    )


CATALOG = b"<< /Type /Catalog /Pages 2 0 R >>"
PAGES = b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>"
FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def page(contents, xobjects=b""):
    """Object 3: the one page, drawing `contents`, with font F1 (object 4) and `xobjects`."""
    return (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %s "
        b"/Resources << /Font << /F1 4 0 R >> /XObject << %s >> >> >>" % (contents, xobjects)
    )


def form(draws, xobjects):
    """A form XObject whose content is `draws`, naming `xobjects` in its resources."""
    return stream(
        draws,
        b"/Type /XObject /Subtype /Form /BBox [0 0 10 10] "
        b"/Resources << /Font << /F1 4 0 R >> /XObject << %s >> >>" % xobjects,
    )


def self_drawing():
    """A form that draws itself: text extraction recursed until the stack overflowed."""
    return pdf([
        CATALOG, PAGES, page(b"5 0 R", b"/X 6 0 R"), FONT,
        stream(b"/X Do"),
        form(b"/X Do", b"/X 6 0 R"),
    ])


def mutually_drawing():
    """Two forms that draw each other."""
    return pdf([
        CATALOG, PAGES, page(b"5 0 R", b"/A 6 0 R"), FONT,
        stream(b"/A Do"),
        form(b"/B Do", b"/B 7 0 R"),
        form(b"/A Do", b"/A 6 0 R"),
    ])


def repeated_contents():
    """One 4 MiB content stream listed 2,000 times: 8 GiB of content from 16 KB."""
    contents = b"[" + b" ".join([b"5 0 R"] * 2000) + b"]"
    return pdf([
        CATALOG, PAGES, page(contents), FONT,
        stream(b" " * (4 << 20), filters=1),
    ])


def nested_deflate():
    """A content stream deflated twice that inflates to 1 GiB of zeros (from about 2 KB)."""
    packer = zlib.compressobj(9)
    zeros = bytes(1 << 24)
    inner = b"".join(packer.compress(zeros) for _ in range(64)) + packer.flush()
    outer = zlib.compress(inner, 9)
    body = b"<< /Length %d /Filter [/FlateDecode /FlateDecode] >>\nstream\n%s\nendstream" % (
        len(outer),
        outer,
    )
    return pdf([CATALOG, PAGES, page(b"5 0 R"), FONT, body])


def billion_draws():
    """Forms nested eight deep, each drawing the one below ten times: 10^8 draws of text."""
    objects = [CATALOG, PAGES, page(b"5 0 R", b"/F8 14 0 R"), FONT, stream(b"/F8 Do")]
    # Objects 6..14 are forms F0..F8; F0 shows text, Fk draws F(k-1) ten times.
    objects.append(form(b"BT /F1 1 Tf (a) Tj ET", b""))
    for level in range(1, 9):
        below = b"/F%d" % (level - 1)
        objects.append(form(b" ".join([below + b" Do"] * 10), below + b" %d 0 R" % (5 + level)))
    return pdf(objects)


PDFS = {
    "self-drawing.pdf": self_drawing,
    "mutually-drawing.pdf": mutually_drawing,
    "repeated-contents.pdf": repeated_contents,
    "nested-deflate.pdf": nested_deflate,
    "billion-draws.pdf": billion_draws,
}

# 128 KiB of "cursor forward 65535 columns": a terminal that pads each move asked for 8.4 GB.
CURSOR_FORWARD = "cursor-forward.txt"


def write_all(workdir):
    """Writes every hostile file into `workdir`; returns the PDFs' names."""
    for name, build in PDFS.items():
        with open(os.path.join(workdir, name), "wb") as f:
            f.write(build())
    with open(os.path.join(workdir, CURSOR_FORWARD), "wb") as f:
        f.write(b"\x1b[65535C" * (16 << 10))
    return list(PDFS)
