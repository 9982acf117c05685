#pragma once
/// Process identity calls that Swift's Glibc module does not export.

/// Whether the kernel started this program in secure-execution mode (getauxval(AT_SECURE)):
/// set-user-ID, set-group-ID or file capabilities raised its privileges over its caller's.
int cshims_at_secure(void);

/// setfsuid(2) for the calling thread only; returns the previous filesystem user ID.
int cshims_setfsuid(unsigned int uid);

/// setfsgid(2) for the calling thread only; returns the previous filesystem group ID.
int cshims_setfsgid(unsigned int gid);
