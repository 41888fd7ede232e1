/* sla eigsh FILE -k K: placeholder until the eigensolver lands. */
#include <string.h>

#include "cli.h"

int cmd_eigsh(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        puts("usage: sla eigsh FILE -k K [--which SA|LA|SM|LM] [--sigma S] [--json]\n"
             "(not available in this build yet)");
        return EXIT_OK;
    }
    fprintf(stderr, "sla eigsh: not available in this build yet\n");
    return EXIT_FAILURE_;
}
