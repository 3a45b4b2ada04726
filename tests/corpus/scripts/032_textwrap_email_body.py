import textwrap

dept = "Operations"
budget = get_budget(dept)
staff = list_employees(dept)
head = [e for e in staff if e["manager_id"] is None][0]
used = budget["spent_ytd"] / budget["annual_budget"]

paragraph = (
    f"As of {budget['as_of']}, the {dept} department has used {used:.1%} of its "
    f"annual budget of {budget['annual_budget']:,} {budget['currency']}. "
    f"There are {len(staff)} people in the team and the remaining budget is "
    f"{budget['annual_budget'] - budget['spent_ytd']:,.2f} {budget['currency']}. "
    "Please review planned purchases for the rest of the year."
)
body = textwrap.fill(paragraph, width=60)
names = textwrap.indent("\n".join(e["name"] for e in staff), "  * ")
full = textwrap.dedent(f"""\
    Hi {head['name'].split()[0]},

""") + body + "\n\nTeam:\n" + names
print(full)
subject = textwrap.shorten(f"{dept} budget status: {used:.0%} used, review needed before Q4 planning", width=50)
receipt = send_email(head["email"], subject, full)
{"subject": subject, "lines": full.count("\n") + 1, "message_id": receipt["message_id"], "wrapped": textwrap.wrap(paragraph, 40)[:2]}
