/* consumer.cpp -- consumer.c compiled as C++ (see there). */
#include "consumer.c"
