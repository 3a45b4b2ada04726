# Nested helper functions score stores on several criteria
def score_store(store_id, days):
    info = get_store_info(store_id)

    def revenue_score():
        rows = [get_daily_revenue(store_id, d) for d in days]
        per_sqm = sum(r["revenue_yuan"] for r in rows) / info["size_sqm"]
        return min(per_sqm / 200, 10)

    def weather_penalty():
        wet = 0
        for d in days:
            if get_weather(info["city"], d)["precipitation_mm"] > 5:
                wet += 1
        return wet * 0.5

    def age_bonus():
        years = 2026 - int(info["opened"][:4])
        return 1.0 if years >= 5 else 0.5 if years >= 2 else 0.0

    return round(revenue_score() - weather_penalty() + age_bonus(), 3)

days = ["2026-06-10", "2026-06-11", "2026-06-12"]
scores = {sid: score_store(sid, days) for sid in ["ST001", "ST003", "ST005", "ST007", "ST011", "ST013"]}
ranking = sorted(scores, key=scores.get, reverse=True)
for i, sid in enumerate(ranking, 1):
    print(f"#{i} {sid} {scores[sid]:6.3f}")
{"scores": scores, "ranking": ranking}
