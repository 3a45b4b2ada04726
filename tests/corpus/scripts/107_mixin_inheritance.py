class SerializableMixin:
    def to_dict(self):
        return {k: getattr(self, k) for k in self.fields()}

class LabelMixin:
    def label(self):
        return f"[{self.kind}] {self.name}"

class Entity:
    kind = "entity"

    def __init__(self, ident, name):
        self.ident = ident
        self.name = name

    def fields(self):
        return ["ident", "name"]

class Store(SerializableMixin, LabelMixin, Entity):
    kind = "store"

    def __init__(self, row):
        super().__init__(row["store_id"], row["name"])
        self.city = row["city"]

    def fields(self):
        return super().fields() + ["city"]

class Employee(SerializableMixin, LabelMixin, Entity):
    kind = "employee"

    def __init__(self, row):
        super().__init__(row["employee_id"], row["name"])
        self.dept = row["department"]

    def fields(self):
        return super().fields() + ["dept"]

things = [Store(r) for r in list_stores()[:3]] + [Employee(r) for r in list_employees("HR")]
for t in things:
    print(t.label())
{"items": [t.to_dict() for t in things], "is_entity": all(isinstance(t, Entity) for t in things),
 "store_mixin": isinstance(things[0], LabelMixin), "kinds": sorted({t.kind for t in things})}
