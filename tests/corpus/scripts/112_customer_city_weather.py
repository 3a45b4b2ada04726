# Which customers should get a "rainy day" coupon tomorrow?
tomorrow = "2026-09-02"
customers = list_customers()
cities = sorted({c["city"] for c in customers})
forecast = dict(zip(cities, parallel(get_weather, [{"city": c, "date": tomorrow} for c in cities])))
rainy = {c for c, w in forecast.items() if w["condition"] in ("light rain", "heavy rain")}

recipients = [c for c in customers if c["city"] in rainy and c["tier"] != "bronze"]
sent = []
for c in recipients[:5]:
    profile = get_customer(c["customer_id"])
    w = forecast[c["city"]]
    r = send_email(profile["email"], "A warm drink for a rainy day",
                   f"Hi {profile['name'].split()[0]}, {w['precipitation_mm']} mm of rain is expected in {c['city']} "
                   f"tomorrow. Show this mail for 20% off any hot drink.")
    sent.append(r["message_id"])
print(f"rain tomorrow in: {sorted(rainy)}; {len(recipients)} eligible, {len(sent)} emailed")
{"rainy": sorted(rainy), "eligible": [c["customer_id"] for c in recipients], "sent": sent}
