#pragma once
/// glibc's malloc statistics, which Swift's Glibc module does not export (malloc.h).

#include <stddef.h>

/// The bytes malloc has handed out and not taken back (mallinfo2: in arenas and mmapped).
size_t cshims_heap_bytes_in_use(void);
