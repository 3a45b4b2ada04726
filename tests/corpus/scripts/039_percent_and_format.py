# Old-style % formatting and str.format on plain values
stores = list_stores()[:6]
lines = []
for s in stores:
    r = get_daily_revenue(s["store_id"], "2026-05-20")
    lines.append("%-6s %-20s %10.2f %5d" % (s["store_id"], s["name"], r["revenue_yuan"], r["transactions"]))
    lines.append("{0:<6} {1:>8.1f}k avg {2:07.2f}".format(s["store_id"], r["revenue_yuan"] / 1000, r["avg_ticket"]))
print("\n".join(lines))

template = "{name} opened {opened} in {city}"
sentences = [template.format(**s) for s in stores[:2]]
pct = "%.1f%% of target" % (93.456,)
hexed = "%x / %o / %e" % (255, 8, 12345.678)
padded = "{:*^20}".format("REPORT")
signed = "{:+d} {:+.2f}".format(42, -3.14159)
thousands = "{:,}".format(1234567)
repr_fmt = "%r and %s" % ("quoted", "plain")
{"lines": lines[:4], "sentences": sentences, "pct": pct, "hexed": hexed, "padded": padded, "signed": signed,
 "thousands": thousands, "repr": repr_fmt}
