"""Kill-table plugin (registered by the root conftest so the xdist controller loads it too):
collect the mutant results from every worker and print them at the end of the run."""

import json

KILLS = []


def pytest_runtest_logreport(report):
    if report.when == "call":
        KILLS.extend(json.loads(v) for k, v in report.user_properties if k == "kill")


def pytest_terminal_summary(terminalreporter):
    if not KILLS:
        return
    write = terminalreporter.write_line
    write("")
    write(f"{'mutant':<34} {'clause':<46} {'killed':<7} {'examples':>8} {'seconds':>8}")
    for k in sorted(KILLS, key=lambda k: k["mutant"]):
        write(f"{k['mutant']:<34} {k['clause']:<46} {str(k['killed']):<7} {str(k['examples']):>8} {k['seconds']:>8}")
    write(f"kill table: {sum(k['killed'] for k in KILLS)}/{len(KILLS)} mutants killed")
