#include "cshims_clock.h"

#include <sys/timex.h>

int cshims_clock_synchronised(void) {
    struct timex state = {0};
    int result = adjtimex(&state);
    if (result < 0) return -1;
    return result != TIME_ERROR;
}
