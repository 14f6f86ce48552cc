"""What chapter 07's figure scripts share: an SVG writer and their command line.

    from svg import Svg, redraw_or_check
    figure = Svg(400, 200, "A title"); figure.rect(10, 10, 50, 20); figure.text(10, 60, "label")
    sys.exit(redraw_or_check({"name.svg": draw_name}, folder, "python3 path/to/script.py"))

The output is deterministic (same drawing, same bytes), so a test can compare a committed figure
with what its script draws now. Python's standard library only.
"""
import argparse
from pathlib import Path

FONT = "Helvetica, Arial, sans-serif"
INK, PAPER = "#222222", "#f7f7f7"


class Svg:
    """A figure: shapes in drawing order, written as one SVG file."""

    def __init__(self, width, height, title):
        self.width, self.height, self.title, self.items = width, height, title, []

    def rect(self, x, y, w, h, fill=PAPER, stroke=INK, width=1.0, dash=None, opacity=1.0):
        extra = (' stroke-dasharray="%s"' % dash if dash else "") + (
            ' fill-opacity="%g"' % opacity if opacity != 1.0 else "")
        self.items.append('<rect x="%g" y="%g" width="%g" height="%g" fill="%s" stroke="%s" stroke-width="%g"%s/>'
                          % (x, y, w, h, fill, stroke, width, extra))

    def text(self, x, y, s, size=12, anchor="start", weight="normal", fill=INK):
        s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        self.items.append('<text x="%g" y="%g" font-size="%g" text-anchor="%s" font-weight="%s" fill="%s">%s</text>'
                          % (x, y, size, anchor, weight, fill, s))

    def line(self, x1, y1, x2, y2, stroke=INK, width=1.0, arrow=False, dash=None):
        extra = (' marker-end="url(#arrow)"' if arrow else "") + (' stroke-dasharray="%s"' % dash if dash else "")
        self.items.append('<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="%g"%s/>'
                          % (x1, y1, x2, y2, stroke, width, extra))

    def cell(self, x, y, w, h, label="", fill=PAPER, size=10, fill_text=INK, stroke=INK):
        """A box with its label centred in it."""
        self.rect(x, y, w, h, fill, stroke)
        if label != "":
            self.text(x + w / 2, y + h / 2 + size * 0.35, str(label), size, "middle", fill=fill_text)

    def svg(self):
        return "\n".join([
            '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s">'
            % (self.width, self.height, self.width, self.height, FONT),
            "<title>%s</title>" % self.title,
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="%s"/></marker></defs>' % INK,
            '<rect width="100%" height="100%" fill="white"/>',
            *self.items, "</svg>", ""])


def redraw_or_check(figures, folder, redraw_command):
    """The figure scripts' command line: writes each figure {file name: function returning an Svg}
    into folder, or with --check writes nothing and returns 1 if a committed one differs."""
    parser = argparse.ArgumentParser(description="Redraws the figures; --check compares them instead.")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a committed figure differs")
    args = parser.parse_args()
    stale = []
    for name, draw in figures.items():
        path = Path(folder) / name
        text = draw().svg()
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        if args.check:
            stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
            print("wrote %s" % path)
    if stale:
        print("out of date with the script or the code it reads: %s\nredraw with: %s"
              % (", ".join(stale), redraw_command))
        return 1
    print("%d figures %s" % (len(figures), "up to date" if args.check else "drawn"))
    return 0
