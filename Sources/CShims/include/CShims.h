/// The libc-only helpers of cellpath, one header per concern.
#pragma once
#include "cshims_bind.h"
#include "cshims_clock.h"
#include "cshims_close.h"
#include "cshims_fd.h"
#include "cshims_identity.h"
#include "cshims_malloc.h"
#include "cshims_netns.h"
#include "cshims_pty.h"
#include "cshims_spawn.h"
