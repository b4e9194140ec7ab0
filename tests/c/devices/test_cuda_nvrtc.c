#include <stdio.h>
int main(void) { printf("placeholder\n"); return 77; }
