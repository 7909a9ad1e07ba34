// The headers most tests include, compiled once as the tests' precompiled header
// (tests/CMakeLists.txt): parsing them was over half of each test file's compile time
// (gtest, nlohmann-json, the STL and the exporter/runtime headers behind e2e_support.h).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "e2e_support.h"
