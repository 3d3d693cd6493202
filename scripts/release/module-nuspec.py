#!/usr/bin/env python3
"""Writes the .nuspec of the module's PowerShell Gallery package from its manifest (GeoDrive.psd1).

The fields and tags are those Publish-PSResource writes: id = the module's name, the manifest's author,
description, copyright and project URI, and the tags the Gallery searches by (PSModule, PSEdition_*,
PSIncludes_Cmdlet, PSCmdlet_<name> and PSCommand_<name> per cmdlet, PSIncludes_DscResource and
PSDscResource_<name> per DSC resource) after the manifest's own PSData tags. Every file of the module's
folder goes in at the package's root, as Publish-PSResource puts it.

    module-nuspec.py PATH/GeoDrive.psd1 VERSION > GeoDrive.nuspec
"""
import os
import re
import sys
from xml.sax.saxutils import escape


def scalar(text, key):
    m = re.search(r"^\s*%s\s*=\s*'([^']*)'" % key, text, re.MULTILINE)
    return m.group(1) if m else None


def array(text, key):
    """The strings of `Key = @( ... )` (one per line or comma-separated), comments left out."""
    m = re.search(r"^\s*%s\s*=\s*@\(" % key, text, re.MULTILINE)
    if not m:
        return []
    values = []
    for line in text[m.end():].splitlines():
        code = line.split("#", 1)[0]
        values += re.findall(r"'([^']+)'", code)
        if ")" in code:
            break
    return values


def main(psd1, version):
    text = open(psd1, encoding="utf-8").read()
    name = os.path.splitext(os.path.basename(psd1))[0]
    cmdlets = array(text, "CmdletsToExport")
    dsc = array(text, "DscResourcesToExport")
    tags = array(text, "Tags") + ["PSModule"] + ["PSEdition_" + e for e in array(text, "CompatiblePSEditions")]
    if cmdlets:
        tags.append("PSIncludes_Cmdlet")
        for c in cmdlets:
            tags += ["PSCmdlet_" + c, "PSCommand_" + c]
    if dsc:
        tags.append("PSIncludes_DscResource")
        tags += ["PSDscResource_" + d for d in dsc]
    seen, unique = set(), []
    for t in tags:
        if t.lower() not in seen:
            seen.add(t.lower())
            unique.append(t)

    fields = [
        ("id", name),
        ("version", version),
        ("authors", scalar(text, "Author")),
        ("owners", scalar(text, "Author")),
        ("requireLicenseAcceptance", "false"),
        ("description", scalar(text, "Description")),
        ("copyright", scalar(text, "Copyright")),
        ("projectUrl", scalar(text, "ProjectUri")),
        ("tags", " ".join(unique)),
    ]
    out = ['<?xml version="1.0" encoding="utf-8"?>',
           '<package xmlns="http://schemas.microsoft.com/packaging/2011/08/nuspec.xsd">',
           "  <metadata>"]
    for key, value in fields:
        if value:
            out.append("    <%s>%s</%s>" % (key, escape(value), key))
    out += ["  </metadata>",
            "  <files>",
            '    <file src="**" target="" />',
            "  </files>",
            "</package>"]
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
