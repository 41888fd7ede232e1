/* sla eigsh FILE -k K: placeholder until the eigensolver lands. */
#include "cli.h"

int cmd_eigsh(int argc, char **argv)
{
    fprintf(stderr, "sla eigsh: not available in this build yet\n");
    return EXIT_FAILURE_;
}
