#!/usr/bin/env python3
"""Reads Nsight Compute's raw CSV (`ncu --page raw --csv`, or `ncu --import report --page raw
--csv`): one row per profiled kernel launch, one column per metric, with a units row under the
header.

    import ncu_csv
    rows = ncu_csv.read(text)                     # list of {column header: cell}
    ncu_csv.value(rows[0], "gpu__time_duration.sum")  # -> float

Lines that are not part of the table (the profiled program's own output, ncu's ==PROF== and
==WARNING== lines) are skipped: the table starts at the header row, whose first cell is "ID".
Run as a script, it checks itself on a small sample and exits 0.
"""
import csv
import io

__all__ = ["read", "value"]


def read(csv_text):
    """One dict per profiled kernel launch, keyed by the CSV's column headers; the units row
    under the header is dropped."""
    header, rows, units_pending = None, [], False
    for record in csv.reader(io.StringIO(csv_text)):
        if not record:
            continue
        if header is None:
            if record[0] == "ID":
                header = record
                units_pending = True
            continue
        if units_pending:  # the row under the header: units ("", "nsecond", "%", ...)
            units_pending = False
            if not record[0].strip().isdigit():
                continue
        if len(record) != len(header) or not record[0].strip().isdigit():
            continue  # not a kernel's row (a message between tables)
        rows.append(dict(zip(header, record)))
    return rows


def value(row, metric):
    """The metric's value as a float, its thousand separators removed ("1,048,576" -> 1048576.0).
    Raises KeyError if the row has no such column, ValueError if the cell is not a number."""
    return float(row[metric].replace(",", "").strip())


def _self_test():
    sample = (
        "==PROF== Connected to process 1 (/bin/program)\n"
        "program output, with, commas\n"
        '"ID","Kernel Name","gpu__time_duration.sum","sm__inst_executed_pipe_tensor_op_gmma.sum"\n'
        '"","","nsecond","inst"\n'
        '"0","tc_tma_wgmma(CUtensorMap, int)","199,712","1,048,576"\n'
        '"1","nvjet_sm90_tss","176,320","2,097,152"\n'
        "==PROF== Disconnected from process 1\n"
    )
    rows = read(sample)
    assert len(rows) == 2, rows
    assert rows[0]["Kernel Name"] == "tc_tma_wgmma(CUtensorMap, int)"
    assert value(rows[0], "gpu__time_duration.sum") == 199712.0
    assert value(rows[1], "sm__inst_executed_pipe_tensor_op_gmma.sum") == 2097152.0
    assert read("no table here\n") == []
    print("ncu_csv: self-test passed")


if __name__ == "__main__":
    _self_test()
