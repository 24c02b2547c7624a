"""How a diagram file is served: as an image that can never run anything.

An SVG opened on its own is a document that may hold scripts and links. Plan names and part names are escaped when
the diagrams are drawn, but the response also carries its own Content-Security-Policy (no scripts, no requests,
sandboxed), so even a drawing mistake cannot turn a downloaded diagram into a page that acts as the user.
"""

from __future__ import annotations

from django.http import HttpResponse

SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox"


def svg_response(svg: str, filename: str) -> HttpResponse:
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    response["Content-Disposition"] = f'inline; filename="{filename}"'
    response["Content-Security-Policy"] = SVG_POLICY
    response["X-Content-Type-Options"] = "nosniff"
    return response
