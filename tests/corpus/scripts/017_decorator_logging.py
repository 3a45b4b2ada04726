import functools

call_log = []

def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        result = fn(*args, **kwargs)
        call_log.append((args, tuple(sorted(kwargs.items())), result))
        return result
    return wrapper

def retry(times):
    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            last = None
            for attempt in range(times):
                try:
                    return fn(*args, **kwargs)
                except ToolError as e:
                    last = e
                    print(f"attempt {attempt + 1} failed: {e.message}")
            return None
        return wrapper
    return decorate

@retry(2)
@logged
def store_revenue(store_id, day):
    return get_daily_revenue(store_id, day)["revenue_yuan"]

values = [store_revenue(sid, "2026-04-10") for sid in ["ST001", "ST017", "ST020", "ST099"]]
print(values)
{"values": values, "logged_calls": len(call_log), "first_log": list(call_log[0][0])}
