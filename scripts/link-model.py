#!/usr/bin/env python3
"""A MODEL (not a measurement) of split runs' efficiency against link bandwidth and GPU count.

Calibrated on figures measured on 2 NVIDIA H200s on 2026-11-27 (docs/multi-gpu.md, "Two hosts,
simulated on one"); everything past 2 GPUs is predicted. Writes the table (markdown) to stdout
and the plot to docs/multi-gpu-model.svg. No dependencies beyond Python 3.

The model of one step of a part with the exchange overlapped (heat: edges first; Gray-Scott:
edge rows first, --overlap):
    t_step = max(t_compute * (1 + overhead), t_edges + bytes / bandwidth + latency * messages)
    efficiency = t_one_gpu / (N * t_step)            (strong: the same grid on N GPUs)
               = t_one_gpu / t_step                   (weak: each GPU keeps one GPU's grid)
The slowest part decides: a part whose neighbour is on another host sends over the network,
one network link per GPU (GPUs of a host are neighbours over NVLink, 4 per host).
"""
import sys
from pathlib import Path

# --- Measured on one H200 (ms per step) and the split's cost, 2026-11-27 ---------------------
HEAT_T1_MS = 8.89           # heat 1200^3 single, one H200
HEAT_OVERHEAD = 0.03        # edges first: two more pipeline starts per step (97.4% local)
GS_T1_MS = 0.345            # Gray-Scott 16384^2 streaming, one H200
GS_OVERHEAD = 0.16          # streaming with --overlap: its edge rows stepped apart (86.2% on 2 ranks, 4x4 sockets)
# --- Links: measured by the heat bench's exchange alone (23.04 MB each way per step) ----------
LOOPBACK_DEFAULT_GBS = 2.24     # NCCL sockets over loopback, default threads (10.28 ms)
LOOPBACK_WIDE_GBS = 5.3         # NCCL_SOCKET_NTHREADS=4 NCCL_NSOCKS_PERTHREAD=4 (4.34 ms)
NVLINK_NCCL_GBS = 41.0          # NCCL over NVLink with 2 SMs left to it (0.56 ms)
# --- Assumed (not measured here): InfiniBand as NCCL uses it -------------------------------
IB_EFFICIENCY = 0.9             # NCCL's bus bandwidth against the line rate
IB_LATENCY_MS = 0.010           # per message, with NCCL's proxy
GPUS_PER_HOST = 4


def heat_step(n_side_planes, t_compute, gbs, latency_ms):
    """One heat step on a part: 4 planes of n^2 f32 each way per neighbour per step."""
    halo_mb = 4 * n_side_planes ** 2 * 4 / 1e6
    transfer = halo_mb / gbs + 2 * latency_ms
    # The edges: 4 planes at each end, each launch with 8 planes of pipeline fill.
    t_plane = HEAT_T1_MS / 1200 * (n_side_planes / 1200) ** 2
    edges = 2 * (4 + 8) * t_plane
    return max(t_compute * (1 + HEAT_OVERHEAD), edges + transfer)


def heat(gpus, gbs, strong, latency_ms=IB_LATENCY_MS):
    """Efficiency of heat: strong on a 2400^3 box, weak with 1200^3 per GPU."""
    if strong:
        side, t1 = 2400, HEAT_T1_MS * 8
        t_part = t1 / gpus
    else:
        side, t1 = 1200, HEAT_T1_MS
        t_part = t1
    net_gbs = gbs if gpus > GPUS_PER_HOST or gpus == 2 else NVLINK_NCCL_GBS
    t = heat_step(side, t_part, net_gbs, latency_ms)
    return t1 / (gpus * t) if strong else t1 / t


def gray_scott(gpus, gbs, strong, latency_ms=IB_LATENCY_MS):
    """Gray-Scott streaming: strong on 65536^2, weak with 16384^2 per GPU; 28-row halos of u
    and v, exchanged every 28 steps (one message each way per neighbour and field)."""
    width, t1 = (65536, GS_T1_MS * 16) if strong else (16384, GS_T1_MS)
    t_part = t1 / gpus if strong else t1
    halo_mb = 28 * width * 2 * 4 / 1e6
    net_gbs = gbs if gpus > GPUS_PER_HOST or gpus == 2 else NVLINK_NCCL_GBS
    transfer_per_step = (halo_mb / net_gbs + 4 * latency_ms) / 28
    t = max(t_part * (1 + GS_OVERHEAD), transfer_per_step + 0.002)
    return t1 / (gpus * t) if strong else t1 / t


def ib(gbit):
    return gbit / 8 * IB_EFFICIENCY


def svg(series, path):
    """A line chart: efficiency (%) against GPUs (8..64, log scale), one line per series."""
    w, h, left, top, right, bottom = 720, 420, 60, 30, 230, 50
    gpus = [8, 16, 32, 64]
    x = lambda g: round(left + (w - left - right) * (gpus.index(g) / (len(gpus) - 1)), 1)
    y = lambda e: round(top + (h - top - bottom) * (1 - e / 100), 1)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
           f'<rect width="{w}" height="{h}" fill="white"/>',
           f'<text x="{left}" y="18" font-size="14">MODELLED, not measured: heat split over hosts '
           f'(calibrated on 2 H200s, 2026-11-27)</text>']
    for e in range(0, 101, 20):
        out.append(f'<line x1="{left}" x2="{w - right}" y1="{y(e)}" y2="{y(e)}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 8}" y="{y(e) + 4}" text-anchor="end">{e}%</text>')
    for g in gpus:
        out.append(f'<text x="{x(g)}" y="{h - bottom + 18}" text-anchor="middle">{g}</text>')
    out.append(f'<text x="{(left + w - right) / 2}" y="{h - 12}" text-anchor="middle">GPUs (4 per host)</text>')
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
    for i, (name, dash, values) in enumerate(series):
        c = colours[i % len(colours)]
        pts = " ".join(f"{x(g)},{y(100 * min(1.0, v))}" for g, v in zip(gpus, values))
        out.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="2"'
                   + (' stroke-dasharray="6,4"' if dash else '') + '/>')
        ly = top + 14 + 18 * i
        out.append(f'<line x1="{w - right + 10}" x2="{w - right + 34}" y1="{ly}" y2="{ly}" stroke="{c}" stroke-width="2"'
                   + (' stroke-dasharray="6,4"' if dash else '') + '/>')
        out.append(f'<text x="{w - right + 40}" y="{ly + 4}">{name}</text>')
    out.append("</svg>")
    Path(path).write_text("\n".join(out) + "\n")


def main():
    gpus = [8, 16, 32, 64]
    print("MODELLED (not measured): efficiency with the exchange overlapped, 4 GPUs per host, one "
          f"link per GPU at {IB_EFFICIENCY:.0%} of its line rate, {IB_LATENCY_MS * 1000:.0f} µs per message\n")
    print("| workload | link | " + " | ".join(f"{g} GPUs" for g in gpus) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in gpus) + " |")
    series = []
    for label, model, strong in [("heat, strong 2400³", heat, True), ("heat, weak 1200³/GPU", heat, False),
                                 ("Gray-Scott streaming, strong 65536²", gray_scott, True),
                                 ("Gray-Scott streaming, weak 16384²/GPU", gray_scott, False)]:
        for gbit in (100, 200, 400):
            values = [model(g, ib(gbit), strong) for g in gpus]
            print(f"| {label} | {gbit} Gb/s | " + " | ".join(f"{100 * min(1, v):.0f}%" for v in values) + " |")
            if model is heat:
                series.append((f"heat {'strong' if strong else 'weak'}, {gbit} Gb/s", not strong, values))
    # The calibration itself: 2 parts, one per "host", heat 1200^3 strong.
    print("\nChecks of the model against the runs it was calibrated on (heat 1200³, 2 ranks, edges first):")
    for name, gbs, measured in [("loopback sockets, default", LOOPBACK_DEFAULT_GBS, 43.2),
                                ("loopback sockets, 4x4", LOOPBACK_WIDE_GBS, 96.1),
                                ("NVLink through NCCL", NVLINK_NCCL_GBS, 96.0)]:
        t = heat_step(1200, HEAT_T1_MS / 2, gbs, 0.0)
        print(f"- {name} ({gbs} GB/s): modelled {100 * HEAT_T1_MS / (2 * t):.1f}%, measured {measured}%")
    t = heat_step(1200, HEAT_T1_MS / 2, ib(200), IB_LATENCY_MS)
    print(f"- predicted for one 200 Gb/s InfiniBand link per GPU: {100 * HEAT_T1_MS / (2 * t):.1f}% (modelled)")
    svg(series, sys.argv[1] if len(sys.argv) > 1 else "docs/multi-gpu-model.svg")


if __name__ == "__main__":
    main()
