class ReportError(Exception):
    """Raised when a section of the report cannot be produced."""

def section_revenue(store_id, day):
    try:
        return get_daily_revenue(store_id, day)["revenue_yuan"]
    except ToolError as e:
        raise ReportError(f"revenue section failed for {store_id}") from e

def build(stores, day):
    sections, problems = {}, []
    for sid in stores:
        try:
            sections[sid] = section_revenue(sid, day)
        except ReportError as err:
            problems.append({"store": sid, "error": str(err)})
    return sections, problems

sections, problems = build(["ST001", "ST017", "ST020", "ST404"], "2026-03-01")
try:
    try:
        get_inventory("SKU-0000")
    except ToolError as inner:
        raise RuntimeError("inventory unavailable") from inner
except RuntimeError as outer:
    chained = str(outer)

try:
    raise ValueError("plain") from None
except ValueError as e:
    suppressed = str(e)
print(problems)
{"sections": sections, "problems": problems, "chained": chained, "suppressed": suppressed}
