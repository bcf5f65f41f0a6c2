/* The one table of hex digits: a byte's value as a hex digit (0-9, a-f, A-F), -1 for
   every other byte.  Every hex reader of the project looks digits up here; their grammars
   differ by file format (see each reader):

   - a device table's cells (gpuclass_cell.h): whitespace, [ ], 0x, 1..n digits
     (gpuclass.ids.cell_parts);
   - pci.ids (pciids.pxi): exactly 2 or 4 digits at fixed columns, then a tab or space;
   - sysfs attributes (gpuclass_sysfs.h): "0x" and 1..n digits, as the kernel writes
     "0x%04x\n";
   - JSON's backslash-u escapes (gpuclass/_feed.pyx): exactly 4 digits.

   Plain C (no Python.h): the feed extension includes it too. */
#ifndef GPUCLASS_HEX_H
#define GPUCLASS_HEX_H

static const signed char gpuclass_hex[256] = {
    -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1, -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
    -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,  0, 1, 2, 3, 4, 5, 6, 7, 8, 9,-1,-1,-1,-1,-1,-1,
    -1,10,11,12,13,14,15,-1,-1,-1,-1,-1,-1,-1,-1,-1, -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
    -1,10,11,12,13,14,15,-1,-1,-1,-1,-1,-1,-1,-1,-1, -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
    -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1, -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
    -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1, -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
    -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1, -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
    -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1, -1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,
};

/* A code unit's value as a hex digit, -1 for any other (code units past a byte too). */
static inline int gpuclass_hex_digit(unsigned int c) {
    return c < 256 ? gpuclass_hex[c] : -1;
}

#endif
