# Event callbacks sharing state through closures
def make_aggregator(threshold):
    count = 0
    over = []
    biggest = None

    def on_row(row):
        nonlocal count, biggest
        count += 1
        if row["revenue_yuan"] > threshold:
            over.append(row["store_id"] + "@" + row["date"])
        if biggest is None or row["revenue_yuan"] > biggest["revenue_yuan"]:
            biggest = row

    def result():
        return {"count": count, "over": over, "biggest": biggest and [biggest["store_id"], biggest["revenue_yuan"]]}

    return on_row, result

def scan(store_ids, dates, callbacks):
    for sid in store_ids:
        for d in dates:
            row = get_daily_revenue(sid, d)
            for cb in callbacks:
                cb(row)

high_cb, high_result = make_aggregator(60000)
low_cb, low_result = make_aggregator(30000)
scan(["ST003", "ST006", "ST013", "ST016"], ["2026-10-03", "2026-10-04", "2026-10-05"], [high_cb, low_cb])
print(high_result())
{"high": high_result(), "low_count": len(low_result()["over"])}
