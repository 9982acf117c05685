#define _GNU_SOURCE
#include "cshims_identity.h"

#include <sys/auxv.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

int cshims_at_secure(void) { return getauxval(AT_SECURE) != 0; }

// The raw system calls: they change the calling thread's credentials only, which is what a
// scoped open on one thread needs (glibc's wrappers do the same, but say nothing about threads).
int cshims_setfsuid(unsigned int uid) { return (int)syscall(SYS_setfsuid, uid); }

int cshims_setfsgid(unsigned int gid) { return (int)syscall(SYS_setfsgid, gid); }
