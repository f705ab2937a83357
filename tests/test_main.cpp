// The Catch2 entry point, in its own translation unit so the test files compile faster.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
