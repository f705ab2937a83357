// attnlens: attention kernels for the browser and beyond. Umbrella header.
#pragma once

#include "attnlens/attention.h"
#include "attnlens/errors.h"
#include "attnlens/kernels.h"
#include "attnlens/mask.h"
#include "attnlens/multihead.h"
#include "attnlens/span.h"
#include "attnlens/training/attention_backward.h"

namespace attnlens {
// "major.minor.patch" of this library.
const char* version();
}  // namespace attnlens
