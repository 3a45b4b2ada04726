# A batch step that signals "stop" with SystemExit and treats interrupts apart from errors.
import sys

stores = {s["store_id"] for s in list_stores()}


def process(order_ids):
    done, failed = [], []
    for oid in order_ids:
        try:
            if oid == "STOP":
                raise SystemExit(2)
            if oid == "INT":
                raise KeyboardInterrupt("operator stop")
            if oid in stores or not oid.startswith("O"):
                raise FileExistsError(f"duplicate {oid}")
            done.append(oid)
        except Exception as exc:  # not SystemExit / KeyboardInterrupt, as in CPython
            failed.append(repr(exc))
    return done, failed


outcomes = []
for batch in (["O1", "X2", "ST001", "O3"], ["O4", "STOP", "O5"], ["INT", "O6"]):
    try:
        done, failed = process(batch)
        outcomes.append({"done": done, "failed": failed})
    except SystemExit as stop:
        outcomes.append({"exit": stop.code, "repr": repr(stop)})
    except KeyboardInterrupt as interrupt:
        outcomes.append({"interrupted": str(interrupt), "base": isinstance(interrupt, Exception)})

errors = [SyntaxError, FileExistsError, NotADirectoryError, BrokenPipeError, TabError]
print("python", sys.version_info[:1] >= (3,), sys.maxsize > 2**31)
for row in outcomes:
    print(row)
{"outcomes": outcomes, "hierarchy": [[repr(e), issubclass(e, OSError)] for e in errors]}
