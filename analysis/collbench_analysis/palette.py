"""One colour and marker per algorithm name, the same in every figure of every report.

Every figure that draws algorithms (bandwidth, latency, ratio, scaling, hot vs cold, efficiency,
DDP, the answer charts) takes its colours from :func:`color_of`, so ``shm`` is the same red in a
1x4 bandwidth plot, a DDP bar and the answers' winner grid, whichever other algorithms a figure
holds. Known names have a fixed, saturated colour (none light grey: the fastest line must be
among the most visible); the library is near-black, the baseline every ratio is taken against;
the library's own algorithms (``library:ALGO``) are greys, not ours. A name this table does not
know gets a colour from :data:`_EXTRA` chosen by a stable hash of the name (not by position in a
figure, which would change with the figure's other lines).
"""
from __future__ import annotations

import zlib

LIBRARY_COLOR = "#222222"

ALGO_COLORS: dict[str, str] = {
    "library": LIBRARY_COLOR,
    "ring": "#1f77b4",                # blue
    "shm": "#d62728",                 # red
    "tree": "#2ca02c",                # green
    "rabenseifner": "#ff7f0e",        # orange
    "butterfly": "#9467bd",           # purple
    "recursive_doubling": "#0e8c9c",  # dark cyan
    "naive": "#8c564b",               # brown
    "pairwise": "#e377c2",            # pink
    "binomial": "#637939",            # olive green
    "pipeline": "#bd9e39",            # ochre
    "hier": "#17becf",                # cyan
    "hier_ring": "#7b4173",           # plum
    "hier_leader": "#393b79",         # indigo
    "han": "#a55194",                 # magenta (Open MPI's coll/han: the library's code)
    "auto": "#8c6d31",                # dark gold
}
_LIBRARY_INTERNAL = ("#555555", "#6f6f6f", "#444444", "#7a7a7a", "#3a3a3a", "#606060")
_EXTRA = ("#e6550d", "#31a354", "#756bb1", "#3182bd", "#de2d26", "#b5651d", "#5b8c00", "#c51b7d", "#4a6fa5",
          "#a0522d")

ALGO_MARKERS: dict[str, str] = {
    "library": "s", "ring": "o", "shm": "D", "tree": "^", "rabenseifner": "v", "butterfly": "<",
    "recursive_doubling": ">", "naive": "x", "pairwise": "p", "binomial": "h", "pipeline": "*", "hier": "P",
    "hier_ring": "X", "hier_leader": "d", "han": "H", "auto": "8",
}
_MARKERS = "osD^v<>ph*XP"


def _stable(name: str, choices: tuple[str, ...]) -> str:
    return choices[zlib.crc32(name.encode()) % len(choices)]


def color_of(algo: str) -> str:
    """The algorithm's colour (hex), the same in every figure; ``library:ALGO`` a grey."""
    if algo in ALGO_COLORS:
        return ALGO_COLORS[algo]
    if algo.startswith("library:"):
        return _stable(algo, _LIBRARY_INTERNAL)
    return _stable(algo, _EXTRA)


def color_on_backend(algo: str, rank: int) -> str:
    """The algorithm's colour on the ``rank``-th backend of a results file with several (0: the reference,
    :func:`.load.backend_order`): its own colour there, lighter on the others (blended towards white), so
    ``ring (gloo)`` is ring's blue, paler, where one chart cell holds one colour (the answer charts)."""
    base = color_of(algo)
    if rank <= 0:
        return base
    w = min(0.3 + 0.2 * rank, 0.8)  # the share of white: 0.5 on the second backend, 0.7 on the third
    r, g, b = (int(base.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4))
    return "#" + "".join(f"{round(c + (255 - c) * w):02x}" for c in (r, g, b))


def marker_of(algo: str) -> str:
    return ALGO_MARKERS.get(algo) or _stable(algo, tuple(_MARKERS))


def text_color_on(hex_color: str) -> str:
    """Black or white, whichever reads better on ``hex_color`` (relative luminance)."""
    r, g, b = (int(hex_color.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4))
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "#000000" if lum > 0.5 else "#ffffff"
