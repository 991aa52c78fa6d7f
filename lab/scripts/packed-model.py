#!/usr/bin/env python3
"""A block-schedule model of the packed batch against one dense sequence of
the same causal work (serving_time's `packed_batch_against_one_dense_sequence`
shape: 16 sequences of 88..4096 rows, H = 16, D = 128, causal, `wgmma`'s
192-row blocks, one block per SM at a time on 132 SMs).

A block costs `c + tiles` time units: the 64-key tiles its rows walk
(bottom-right causal: a block of rows r0 .. r0 + 192 of a sequence of L
queries and L keys walks ceil(min(L, r0 + 192) / 64) tiles) plus a fixed
`c` (prologue, first copies' latency, epilogue). Blocks start in grid
order on the first free SM (list scheduling, as the hardware dispatches a
grid); the call takes as long as its busiest SM. Prints, for several `c`
and dispatch orders, the makespan and the packed/dense rate (dense time
over packed time, both doing the same causal FLOPs)."""

import heapq

SMS = 132
BLOCK = 192
TILE = 64
HEADS = 16
LENS = [4096, 3000, 2000, 1500, 1200, 1000, 800, 700, 600, 400, 300, 250, 200, 150, 100, 88]


def blocks_of(length):
    """Tiles walked by each query block of a causal sequence, block 0 first."""
    n = -(-length // BLOCK)
    return [-(-min(length, (j + 1) * BLOCK) // TILE) for j in range(n)]


def makespan(costs):
    """List scheduling of `costs` in order on SMS single-slot SMs."""
    free = [0.0] * SMS
    heapq.heapify(free)
    end = 0.0
    for cost in costs:
        start = heapq.heappop(free)
        heapq.heappush(free, start + cost)
        end = max(end, start + cost)
    return end


def dense_order(length, c):
    """The dense causal grid: (heads, batch, query blocks) with the heaviest
    query block first; x (heads) fastest."""
    per = blocks_of(length)
    return [c + per[q] for q in reversed(range(len(per))) for _ in range(HEADS)]


def packed_order(c, key=None):
    """The packed grid (heads on x, then every sequence's blocks, each
    sequence's heaviest first); `key` re-sorts the (sequence, block) list."""
    items = []
    for length in LENS:
        per = blocks_of(length)
        items += [per[q] for q in reversed(range(len(per)))]
    if key:
        items.sort(key=key)
    return [c + t for t in items for _ in range(HEADS)]


def main():
    dense_len = round((sum(l * l for l in LENS) ** 0.5) / 64) * 64
    print(f"dense sequence of the same causal work: {dense_len} rows")
    dense_tiles = sum(blocks_of(dense_len)) * HEADS
    packed_tiles = sum(sum(blocks_of(l)) for l in LENS) * HEADS
    work_ratio = sum(l * l for l in LENS) / dense_len**2
    print(f"tiles walked: dense {dense_tiles}, packed {packed_tiles} ({packed_tiles / dense_tiles:.3f}x);"
          f" causal work ratio packed/dense {work_ratio:.3f}")
    print(f"blocks: dense {len(blocks_of(dense_len)) * HEADS}, packed {sum(len(blocks_of(l)) for l in LENS) * HEADS}")
    print("| c (tiles) | order | dense makespan | packed makespan | packed/dense rate |")
    print("|---|---|---|---|---|")
    for c in [0, 4, 8, 16, 32]:
        dense = makespan(dense_order(dense_len, c))
        for name, key in [("grid (as built)", None), ("longest-first (LPT)", lambda t: -t)]:
            packed = makespan(packed_order(c, key))
            print(f"| {c} | {name} | {dense:.0f} | {packed:.0f} | {work_ratio * dense / packed:.3f} |")


main()
