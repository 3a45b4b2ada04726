from typing import Optional, Dict, List, Tuple, Iterable, Union, Callable, Any

def total_revenue(store_ids: List[str], day: str) -> Tuple[float, List[str]]:
    total: float = 0.0
    failed: List[str] = []
    for sid in store_ids:
        try:
            total += get_daily_revenue(sid, day)["revenue_yuan"]
        except ToolError:
            failed.append(sid)
    return round(total, 2), failed

def find_store(city: str, stores: Iterable[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    for s in stores:
        if s["city"] == city:
            return s
    return None

def apply(fn: Callable[[float], float], values: List[float]) -> List[float]:
    return [fn(v) for v in values]

def parse(x: Union[int, str]) -> int:
    return x if isinstance(x, int) else int(x)

stores: List[Dict[str, Any]] = list_stores()
ids: list[str] = [s["store_id"] for s in stores]
total, failed = total_revenue(ids, "2026-04-01")
hit = find_store("Wuhan", stores)
miss = find_store("Lhasa", stores)
print(f"total={total:,.2f} failed={failed}")
{"total": total, "failed": failed, "hit": hit["store_id"] if hit else None, "miss": miss,
 "halved": apply(lambda v: v / 2, [10.0, 3.0]), "parsed": [parse("12"), parse(5)]}
