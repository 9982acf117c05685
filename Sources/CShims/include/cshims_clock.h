#pragma once
/// The kernel's clock state, which Swift's Glibc module does not export (sys/timex.h).

/// Whether the kernel's clock is synchronised (adjtimex(2) with no change: not TIME_ERROR, as
/// timedated's NTPSynchronized reads it): 1 yes, 0 no, -1 the call failed.
int cshims_clock_synchronised(void);
