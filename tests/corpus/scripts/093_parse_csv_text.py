# Parse a CSV-like target table written inline and compare with actual revenue
targets_csv = """store_id,date,target
ST001,2026-08-03,30000
ST002,2026-08-03,42000
ST003,2026-08-03,55000.50
ST005,2026-08-03, 28000
ST020,2026-05-01,20000
bad line without commas
ST007,2026-08-03,abc"""

header, *lines = targets_csv.strip().splitlines()
columns = header.split(",")
rows, rejected = [], []
for line in lines:
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != len(columns):
        rejected.append(line)
        continue
    rec = dict(zip(columns, parts))
    try:
        rec["target"] = float(rec["target"])
    except ValueError:
        rejected.append(line)
        continue
    rows.append(rec)

results = []
for rec in rows:
    try:
        actual = get_daily_revenue(rec["store_id"], rec["date"])["revenue_yuan"]
    except ToolError as e:
        results.append({"store": rec["store_id"], "error": e.message})
        continue
    results.append({"store": rec["store_id"], "hit": actual >= rec["target"], "ratio": round(actual / rec["target"], 3)})
for r in results:
    print(r)
{"results": results, "rejected": rejected}
