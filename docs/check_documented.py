#!/usr/bin/env python3
"""What Doxygen 1.9.4 does not warn about, checked on its XML output (target docs, after Doxygen).

Doxygen warns for an undocumented function, typedef or enum and for a parameter without @param, but
not for an undocumented enum value, nor for a macro on a page that documents some other member. This
check fails, naming each one, when any of these in the public headers lacks a description:

  - a header without @file and @brief;
  - a function, macro, typedef, enum, enum value, variable or struct field;
  - a function parameter without a direction: every @param says [in], [out] or [in,out];
  - a function that returns xffl_status_t without a @return that names XFFL_OK (the statuses it
    returns are listed there, house style).

Usage: check_documented.py XML_DIR [INCLUDE_DIR]
Prints one line per problem as FILE:LINE: error: ..., like Doxygen, and exits 1 if there is any. FILE is
as Doxygen's XML names it (relative after STRIP_FROM_PATH), under INCLUDE_DIR when that is given.
"""
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

MEMBER_KINDS = {"function", "define", "typedef", "enum", "variable"}


def text_of(element):
    """All text under an element, whitespace collapsed ('' for None)."""
    if element is None:
        return ""
    return " ".join("".join(element.itertext()).split())


def described(element):
    return bool(text_of(element.find("briefdescription")) or text_of(element.find("detaileddescription")))


ROOT = None  # INCLUDE_DIR: makes the relative paths of Doxygen's XML absolute


def where(element):
    location = element.find("location")
    if location is None:
        return "<unknown>:0"
    path = Path(location.get("file"))
    if ROOT is not None and not path.is_absolute():
        path = ROOT / path
    return f"{path}:{location.get('line', '0')}"


def check_function(member, problems):
    name = member.findtext("name")
    detailed = member.find("detaileddescription")
    for item in detailed.iter("parameteritem") if detailed is not None else []:
        for parameter_name in item.iter("parametername"):
            if not parameter_name.get("direction"):
                problems.append(f"{where(member)}: error: parameter '{text_of(parameter_name)}' of {name} "
                                "has no direction: write @param[in], @param[out] or @param[in,out]")
    if text_of(member.find("type")) == "xffl_status_t":
        returns = [text_of(s) for s in member.iter("simplesect") if s.get("kind") == "return"]
        if not any("XFFL_OK" in r for r in returns):
            problems.append(f"{where(member)}: error: {name} returns xffl_status_t but its @return does not "
                            "list the statuses (XFFL_OK and each error)")


def check_compound(compound, problems):
    kind = compound.get("kind")
    name = compound.findtext("compoundname")
    if kind == "file" and name.endswith(".h") and not text_of(compound.find("briefdescription")):
        problems.append(f"{where(compound)}: error: header {name} has no @file @brief")
    if kind in ("struct", "union") and not described(compound):
        problems.append(f"{where(compound)}: error: {kind} {name} is not documented")
    for member in compound.iter("memberdef"):
        member_kind = member.get("kind")
        member_name = member.findtext("name")
        if member_kind not in MEMBER_KINDS:
            continue
        if not described(member):
            what = "field" if kind in ("struct", "union") else member_kind
            problems.append(f"{where(member)}: error: {what} {member_name} is not documented")
        if member_kind == "enum":
            for value in member.iter("enumvalue"):
                if not described(value):
                    problems.append(f"{where(member)}: error: enum value {value.findtext('name')} of "
                                    f"{member_name} is not documented")
        if member_kind == "function":
            check_function(member, problems)


def main(argv):
    global ROOT
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    xml_dir = Path(argv[1])
    if len(argv) == 3:
        ROOT = Path(argv[2])
    index = xml_dir / "index.xml"
    if not index.is_file():
        print(f"check_documented: {index} not found: did Doxygen run with GENERATE_XML = YES?", file=sys.stderr)
        return 2
    problems = []
    headers = 0
    for entry in ET.parse(index).getroot().iter("compound"):
        if entry.get("kind") not in ("file", "struct", "union"):
            continue
        for compound in ET.parse(xml_dir / f"{entry.get('refid')}.xml").getroot().iter("compounddef"):
            headers += compound.get("kind") == "file" and compound.findtext("compoundname").endswith(".h")
            check_compound(compound, problems)
    if headers == 0:
        problems.append(f"{index}: error: no header in Doxygen's output: INPUT reads nothing")
    for problem in sorted(set(problems)):
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
