# Weekly revenue: top and bottom stores with heapq, grade bands with bisect.
import heapq
from bisect import bisect_right, insort

days = [f"2026-06-{d:02d}" for d in range(1, 8)]
weekly = []
for s in list_stores():
    total = 0.0
    for d in days:
        try:
            total += get_daily_revenue(s["store_id"], d)["revenue_yuan"]
        except ToolError:
            pass
    weekly.append((round(total, 2), s["store_id"]))

top = heapq.nlargest(3, weekly)
bottom = heapq.nsmallest(3, weekly)
print("top:", top)
print("bottom:", bottom)

bands = [150000, 250000, 300000]
labels = ["D", "C", "B", "A"]
graded = {sid: labels[bisect_right(bands, total)] for total, sid in weekly}
ranking = []
for total, sid in weekly:
    insort(ranking, total)
median = ranking[len(ranking) // 2]
print("median weekly revenue:", median)

heap = []
for total, sid in weekly:
    heapq.heappush(heap, (-total, sid))
first_two = [heapq.heappop(heap)[1] for _ in range(2)]
{"top": [sid for _, sid in top], "grades": dict(sorted(graded.items())[:5]), "first_two": first_two}
