"""plot.py — horizontal bar charts as PNG for the benchmark reports.

Uses matplotlib when it imports; otherwise draws the chart itself (pure
Python: zlib PNG, a 3x5 pixel font, upper-case text) so that a machine
without matplotlib still gets a plot.

    hbar_panels(path, title, panels, note="")

panels: a list of (subtitle, unit, rows); rows: a list of
(label, value, low, high, kind) where low/high (or None) draw a whisker
(e.g. 10th-90th percentile) and kind is "ref", "kstub" or "other" (colour).
"""
import struct
import zlib

COLORS = {"ref": (120, 120, 120), "kstub": (31, 119, 180), "other": (230, 140, 40)}


def hbar_panels(path, title, panels, note=""):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # noqa: F401
    except Exception:
        _fallback(path, title, panels, note)
        return "builtin"
    _matplotlib(path, title, panels, note)
    return "matplotlib"


def _matplotlib(path, title, panels, note):
    import matplotlib.pyplot as plt

    heights = [max(1.2, 0.38 * len(rows) + 0.9) for _, _, rows in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, sum(heights) + 0.8),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (subtitle, unit, rows) in zip(axes[:, 0], panels):
        labels = [r[0] for r in rows][::-1]
        values = [r[1] for r in rows][::-1]
        colors = [tuple(c / 255 for c in COLORS.get(r[4], COLORS["other"])) for r in rows][::-1]
        ys = range(len(rows))
        ax.barh(ys, values, color=colors)
        for y, r in zip(ys, rows[::-1]):
            if r[2] is not None and r[3] is not None:
                ax.plot([r[2], r[3]], [y, y], color="black", linewidth=1)
            ax.text(max(r[1], r[3] or 0, 0), y, "  %s" % _fmt(r[1]), va="center", fontsize=8)
        ax.set_yticks(list(ys))
        ax.set_yticklabels(labels, fontsize=8)
        ax.set_xlabel(unit, fontsize=8)
        ax.set_title(subtitle, fontsize=10, loc="left")
        lo = min([0.0] + [r[1] for r in rows])
        hi = max([0.0] + [r[1] for r in rows] + [r[3] or 0 for r in rows])
        ax.set_xlim(lo * 1.25 if lo < 0 else 0, hi * 1.18 if hi > 0 else 1)
        if lo < 0:
            ax.axvline(0, color="black", linewidth=0.8)
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(title, fontsize=11, x=0.01, ha="left")
    if note:
        fig.text(0.01, 0.005, note, fontsize=7, ha="left", va="bottom")
    fig.tight_layout(rect=(0, 0.02, 1, 0.98))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _fmt(v):
    a = abs(v)
    return "%.0f" % v if a >= 100 else "%.2f" % v if a < 10 else "%.1f" % v


# ---- the fallback: a tiny raster renderer ---------------------------------------------

_GLYPHS = {
    "A": ".#.|#.#|###|#.#|#.#", "B": "##.|#.#|##.|#.#|##.", "C": ".##|#..|#..|#..|.##",
    "D": "##.|#.#|#.#|#.#|##.", "E": "###|#..|##.|#..|###", "F": "###|#..|##.|#..|#..",
    "G": ".##|#..|#.#|#.#|.##", "H": "#.#|#.#|###|#.#|#.#", "I": "###|.#.|.#.|.#.|###",
    "J": "..#|..#|..#|#.#|.#.", "K": "#.#|#.#|##.|#.#|#.#", "L": "#..|#..|#..|#..|###",
    "M": "#...#|##.##|#.#.#|#...#|#...#", "N": "#..#|##.#|#.##|#..#|#..#",
    "O": ".#.|#.#|#.#|#.#|.#.", "P": "##.|#.#|##.|#..|#..", "Q": ".#.|#.#|#.#|##.|.##",
    "R": "##.|#.#|##.|#.#|#.#", "S": ".##|#..|.#.|..#|##.", "T": "###|.#.|.#.|.#.|.#.",
    "U": "#.#|#.#|#.#|#.#|###", "V": "#.#|#.#|#.#|#.#|.#.", "W": "#...#|#...#|#.#.#|##.##|#...#",
    "X": "#.#|#.#|.#.|#.#|#.#", "Y": "#.#|#.#|.#.|.#.|.#.", "Z": "###|..#|.#.|#..|###",
    "0": "###|#.#|#.#|#.#|###", "1": ".#.|##.|.#.|.#.|###", "2": "##.|..#|.#.|#..|###",
    "3": "##.|..#|.#.|..#|##.", "4": "#.#|#.#|###|..#|..#", "5": "###|#..|##.|..#|##.",
    "6": ".##|#..|###|#.#|###", "7": "###|..#|.#.|.#.|.#.", "8": "###|#.#|###|#.#|###",
    "9": "###|#.#|###|..#|##.", " ": "...|...|...|...|...", ".": "...|...|...|...|.#.",
    ",": "...|...|...|.#.|#..", "-": "...|...|###|...|...", ":": "...|.#.|...|.#.|...",
    "/": "..#|..#|.#.|#..|#..", "(": ".#.|#..|#..|#..|.#.", ")": ".#.|..#|..#|..#|.#.",
    "<": "..#|.#.|#..|.#.|..#", ">": "#..|.#.|..#|.#.|#..", "%": "#.#|..#|.#.|#..|#.#",
    "+": "...|.#.|###|.#.|...", "=": "...|###|...|###|...", "_": "...|...|...|...|###",
    "*": "...|#.#|.#.|#.#|...", "[": "##.|#..|#..|#..|##.", "]": ".##|..#|..#|..#|.##",
    "'": ".#.|.#.|...|...|...", "!": ".#.|.#.|.#.|...|.#.", "?": "##.|..#|.#.|...|.#.",
    "&": ".#.|#.#|.#.|#.#|.##", "#": "#.#|###|#.#|###|#.#", "|": ".#.|.#.|.#.|.#.|.#.",
    "~": "...|.#.|#.#|...|...", ";": "...|.#.|...|.#.|#..",
}
_SCALE = 2


class _Canvas:
    def __init__(self, w, h):
        self.w, self.h = w, h
        self.px = bytearray(b"\xff" * (w * h * 3))

    def rect(self, x0, y0, x1, y1, rgb):
        x0, x1 = max(0, int(x0)), min(self.w, int(x1))
        y0, y1 = max(0, int(y0)), min(self.h, int(y1))
        if x1 <= x0:
            return
        row = bytes(rgb) * (x1 - x0)
        for y in range(y0, y1):
            o = (y * self.w + x0) * 3
            self.px[o:o + len(row)] = row

    def text(self, x, y, s, rgb=(0, 0, 0)):
        for ch in s.upper():
            g = _GLYPHS.get(ch, _GLYPHS["?"]).split("|")
            for ry, line in enumerate(g):
                for rx, c in enumerate(line):
                    if c == "#":
                        self.rect(x + rx * _SCALE, y + ry * _SCALE,
                                  x + (rx + 1) * _SCALE, y + (ry + 1) * _SCALE, rgb)
            x += (len(g[0]) + 1) * _SCALE
        return x

    def png(self, path):
        raw = b"".join(b"\x00" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3])
                       for y in range(self.h))

        def chunk(tag, data):
            return (struct.pack(">I", len(data)) + tag + data +
                    struct.pack(">I", zlib.crc32(tag + data) & 0xffffffff))

        with open(path, "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n")
            f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)))
            f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
            f.write(chunk(b"IEND", b""))


def _text_width(s):
    return sum((len(_GLYPHS.get(c, _GLYPHS["?"]).split("|")[0]) + 1) * _SCALE for c in s.upper())


def _fallback(path, title, panels, note):
    row_h, gap = 18, 14
    label_w = max(_text_width(r[0]) for _, _, rows in panels for r in rows) + 20
    width = max(1000, label_w + 520)
    height = 40 + sum(30 + len(rows) * row_h + gap for _, _, rows in panels) + (24 if note else 0)
    cv = _Canvas(width, height)
    cv.text(10, 10, title)
    y = 40
    for subtitle, unit, rows in panels:
        cv.text(10, y, "%s  [%s]" % (subtitle, unit), (60, 60, 60))
        y += 24
        vmax = max([r[1] for r in rows] + [r[3] or 0 for r in rows] + [0.0]) or 1.0
        x0, span = label_w, width - label_w - 110
        cv.rect(x0 - 1, y - 2, x0, y + len(rows) * row_h, (0, 0, 0))
        for label, value, low, high, kind in rows:
            cv.text(10, y + 3, label)
            cv.rect(x0, y + 2, x0 + span * max(value, 0) / vmax, y + row_h - 3,
                    COLORS.get(kind, COLORS["other"]))
            if low is not None and high is not None:
                cv.rect(x0 + span * max(low, 0) / vmax, y + row_h // 2 - 1,
                        x0 + span * high / vmax + 1, y + row_h // 2 + 1, (0, 0, 0))
            cv.text(x0 + span * max(value, high or 0, 0) / vmax + 6, y + 3, _fmt(value))
            y += row_h
        y += gap + 6
    if note:
        cv.text(10, y, note, (80, 80, 80))
    cv.png(path)
