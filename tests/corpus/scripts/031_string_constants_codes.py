import string

# Build short voucher codes for platinum customers from their ids and names
alphabet = string.ascii_uppercase + string.digits

def code_for(customer):
    digits = int(customer["customer_id"][1:])
    letters = "".join(ch for ch in customer["name"].upper() if ch in string.ascii_uppercase)
    chars = [alphabet[(digits * 7 + i * 13 + ord(ch)) % len(alphabet)] for i, ch in enumerate(letters[:6])]
    return "VIP-" + "".join(chars).ljust(6, "X")

vips = list_customers("platinum")
codes = {c["customer_id"]: code_for(c) for c in vips}
for cid, code in codes.items():
    print(cid, code)

valid = all(set(code[4:]) <= set(alphabet) for code in codes.values())
punct_free = not any(ch in string.punctuation.replace("-", "") for code in codes.values() for ch in code)
{"codes": codes, "valid": valid, "punct_free": punct_free, "hex": string.hexdigits[:16],
 "title": string.capwords("quarterly vip voucher run")}
