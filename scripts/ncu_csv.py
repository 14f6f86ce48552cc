#!/usr/bin/env python3
"""Nsight Compute's CSV (`ncu --csv --page raw --metrics ...`), read with the csv module.

    import ncu_csv
    for launch in ncu_csv.read(text):               # one dict per profiled kernel launch
        print(launch["Kernel Name"], ncu_csv.value(launch, "gpu__time_duration.sum"))

ncu writes its CSV to stdout among the program's own output; its lines are the ones that start
with a double quote. The first is the header (ID, Kernel Name, Grid Size, ..., one column per
metric), the second the units of each column, then one line per launch. With
`--print-units base` every value is in the metric's base unit (nanoseconds, bytes, %).
"""
import csv


def read(csv_text):
    """The launches in ncu's CSV output: one dict per launch, keyed by the CSV's column headers.
    Lines that are not ncu's CSV (the program's output, ==PROF== notes) are left out, and so is
    the row of units under each header (one ncu run prints one header; several runs, several)."""
    launches, header, units_next = [], None, False
    for row in csv.reader(line for line in csv_text.splitlines() if line.startswith('"')):
        if row[:1] == ["ID"]:
            header, units_next = row, True
        elif units_next:
            units_next = False  # the units row: "", "", ..., "nsecond", "%"
        elif header is not None:
            launches.append(dict(zip(header, row)))
    return launches


def value(row, metric):
    """The number in column \\p metric of one launch: "1,234.5" -> 1234.5."""
    if metric not in row:
        raise KeyError(f"ncu's CSV has no column '{metric}' (was it in --metrics?)")
    text = row[metric].replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"ncu's value of {metric} is not a number: {row[metric]!r}") from None
