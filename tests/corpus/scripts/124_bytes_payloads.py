# Build a small binary-safe export: CSV text encoded to bytes, checksummed, hex and base64 views.
import base64
import hashlib

lines = ["sku,on_hand"]
for p in list_products("ware")[:5]:
    lines.append(f"{p['sku']},{get_inventory(p['sku'])['on_hand']}")
data = "\n".join(lines).encode("utf-8")
assert isinstance(data, bytes) and not isinstance(data, bytearray)

frame = bytearray()
frame += len(data).to_bytes(4, "big")
frame += data
frame.extend(hashlib.sha256(data).digest()[:4])
print("frame", len(frame), isinstance(frame, bytearray), isinstance(bytes(frame), bytes))

size = int.from_bytes(frame[:4], "big")
body = bytes(frame[4:4 + size])
assert body == data
checksum = frame[-4:].hex()
print("checksum", checksum, "round trip", bytes.fromhex(checksum) == bytes(frame[-4:]))
print(base64.b64encode(body[:24]).decode())
blank = bytes(8)
{"size": size, "checksum": checksum, "first_line": body.split(b"\n")[0].decode(),
 "blank": blank.hex(), "upper": body[:3].upper().decode()}
