/* A fixture for tests/unit/test_code_grammars.py: every kind C has. */
#include <stdio.h>

#define MAX_SIZE 10
#define SQUARE(x) ((x) * (x))

static const int LIMIT = 5;
const char *not_constant = "pointer";
int counter = 0;

struct point {
    int x;
    int y;
};

struct forward;

typedef struct {
    int a;
} anon_t;

typedef int (*callback_t)(int);

union value {
    int i;
    float f;
};

enum color { RED, GREEN };

int prototype(int a);

static int *make(int n)
{
    const int local = 1;
    return 0;
}
