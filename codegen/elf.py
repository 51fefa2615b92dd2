"""What the direct link (codegen/link.py) needs from ELF files: a shared library's own name,
the names it depends on and whether it defines symbol versions (its dynamic section's
DT_SONAME, DT_NEEDED and DT_VERDEF), and an empty shared library that carries only a name,
for the linker to record as a dependency.

32- and 64-bit, either byte order; read through section headers, as the linker reads them;
a header that points outside the file is a ValueError, whatever its sizes claim.
"""

import os
import struct

SHT_STRTAB, SHT_DYNAMIC, SHT_DYNSYM = 3, 6, 11
DT_NULL, DT_NEEDED, DT_STRTAB, DT_SYMTAB, DT_STRSZ, DT_SYMENT, DT_SONAME = 0, 1, 5, 6, 10, 11, 14
DT_VERDEF = 0x6FFFFFFC
ET_DYN = 3


def _formats(ident):
    """The struct formats of an ELF file whose first 16 bytes are `ident`."""
    if (
        len(ident) < 16
        or ident[:4] != b"\x7fELF"
        or ident[4] not in (1, 2)
        or ident[5] not in (1, 2)
    ):
        raise ValueError("not an ELF file")
    order, word = ("<" if ident[5] == 1 else ">"), ("Q" if ident[4] == 2 else "I")
    return {
        "order": order,
        "header": f"{order}16sHHI{word * 3}IHHHHHH",
        "section": f"{order}II{word * 4}II{word * 2}",
        "dyn": order + ("qQ" if ident[4] == 2 else "iI"),
        "symbol_size": 24 if ident[4] == 2 else 16,
    }


def _sections(handle, path):
    """(a reader of the open file `handle` by offset and length, its struct formats, its
    section headers): the file is read only where its headers point."""
    size = os.fstat(handle.fileno()).st_size

    def read(offset, length):
        if offset < 0 or length < 0 or offset + length > size:
            raise ValueError(f"{path}: a header points outside the file")
        handle.seek(offset)
        return handle.read(length)

    formats = _formats(read(0, 16))
    header = struct.unpack(formats["header"], read(0, struct.calcsize(formats["header"])))
    offset, entry_size, count = header[6], header[11], header[12]
    if entry_size < struct.calcsize(formats["section"]):
        raise ValueError(f"{path}: no section headers")
    table = read(offset, entry_size * count)
    sections = [struct.unpack_from(formats["section"], table, i * entry_size) for i in range(count)]
    return read, formats, sections


def _string(text, offset):
    return text[offset : text.index(b"\0", offset)].decode()


def names(path):
    """(DT_SONAME or None, [DT_NEEDED, in order], whether it has DT_VERDEF) of the shared
    library at `path`."""
    with open(path, "rb") as handle:
        read, formats, sections = _sections(handle, path)
        dynamic = next((s for s in sections if s[1] == SHT_DYNAMIC), None)  # one at most
        if dynamic is None:
            return None, [], False
        strings = sections[dynamic[6]]
        text = read(strings[4], strings[5])
        entries = read(dynamic[4], dynamic[5] - dynamic[5] % struct.calcsize(formats["dyn"]))
    soname, needed, versioned = None, [], False
    for tag, value in struct.iter_unpack(formats["dyn"], entries):
        if tag == DT_NULL:
            break
        versioned = versioned or tag == DT_VERDEF
        if tag == DT_NEEDED:
            needed.append(_string(text, value))
        elif tag == DT_SONAME:
            soname = _string(text, value)
    return soname, needed, versioned


def undefined(path):
    """The names of the symbols the shared library at `path` takes from others (its dynamic
    symbols that it does not define)."""
    with open(path, "rb") as handle:
        read, formats, sections = _sections(handle, path)
        table = next((s for s in sections if s[1] == SHT_DYNSYM), None)
        if table is None:
            return []
        strings = sections[table[6]]
        text = read(strings[4], strings[5])
        size = formats["symbol_size"]
        symbols = read(table[4], table[5] - table[5] % size)
    # st_name first; the section index (SHN_UNDEF 0) after name, info and other (64-bit) or
    # after name, value, size, info and other (32-bit)
    index_at = 6 if size == 24 else 14
    found = []
    for at in range(size, len(symbols), size):  # the first symbol is the null one
        name = struct.unpack_from(formats["order"] + "I", symbols, at)[0]
        section = struct.unpack_from(formats["order"] + "H", symbols, at + index_at)[0]
        if section == 0 and name:
            found.append(_string(text, name))
    return found


def defined_size(path, name):
    """The size in bytes of the symbol `name` that the shared library at `path` defines (its
    dynamic symbol's st_size), or None where it defines none of that name."""
    with open(path, "rb") as handle:
        read, formats, sections = _sections(handle, path)
        table = next((s for s in sections if s[1] == SHT_DYNSYM), None)
        if table is None:
            return None
        strings = sections[table[6]]
        text = read(strings[4], strings[5])
        size = formats["symbol_size"]
        symbols = read(table[4], table[5] - table[5] % size)
    # Elf64_Sym: name, info, other, section index, value, size; Elf32_Sym: name, value,
    # size, info, other, section index
    layout = "IBBHQQ" if size == 24 else "IIIBBH"
    for at in range(size, len(symbols), size):
        fields = struct.unpack_from(formats["order"] + layout, symbols, at)
        section, symbol_size = (fields[3], fields[5]) if size == 24 else (fields[5], fields[2])
        if fields[0] and section != 0 and _string(text, fields[0]) == name:
            return symbol_size
    return None


def stub(like, soname):
    """The bytes of a shared library named `soname` that defines nothing, for the machine of
    the ELF file whose first 20 bytes are `like` (an object of the module it is linked into).
    Linked with --no-as-needed, it gives the module a DT_NEEDED `soname`: the dynamic loader
    then loads the real library by that name."""
    formats = _formats(like[:16])
    machine = struct.unpack_from(formats["order"] + "H", like, 18)[0]
    symbol_size = formats["symbol_size"]
    strings = b"\0" + soname.encode() + b"\0"
    dynamic = b"".join(
        struct.pack(formats["dyn"], tag, value)
        for tag, value in (
            (DT_SONAME, 1),
            (DT_STRTAB, 0),
            (DT_SYMTAB, 0),
            (DT_STRSZ, len(strings)),
            (DT_SYMENT, symbol_size),
            (DT_NULL, 0),
        )
    )
    section_names = b"\0.dynsym\0.dynstr\0.dynamic\0.shstrtab\0"
    header_size = struct.calcsize(formats["header"])
    body, offsets = b"", []
    for part in (bytes(symbol_size), strings, dynamic, section_names):
        body += bytes(-(header_size + len(body)) % 8)
        offsets.append(header_size + len(body))
        body += part
    body += bytes(-(header_size + len(body)) % 8)
    # name offset, type, flags (SHF_WRITE 1, SHF_ALLOC 2), address, offset, size, link,
    # info, alignment, entry size
    sections = [
        (0,) * 10,
        (1, SHT_DYNSYM, 2, 0, offsets[0], symbol_size, 2, 1, 8, symbol_size),
        (9, SHT_STRTAB, 2, 0, offsets[1], len(strings), 0, 0, 1, 0),
        (17, SHT_DYNAMIC, 3, 0, offsets[2], len(dynamic), 2, 0, 8, len(dynamic) // 6),
        (26, SHT_STRTAB, 0, 0, offsets[3], len(section_names), 0, 0, 1, 0),
    ]
    section_size = struct.calcsize(formats["section"])
    header = struct.pack(
        formats["header"],
        like[:16],
        ET_DYN,
        machine,
        1,  # EV_CURRENT
        0,  # no entry point
        0,  # no program headers
        header_size + len(body),
        0,
        header_size,
        0,
        0,
        section_size,
        len(sections),
        len(sections) - 1,
    )
    return header + body + b"".join(struct.pack(formats["section"], *s) for s in sections)
