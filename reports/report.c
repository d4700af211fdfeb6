/* Placeholder until the report generator lands. */
#include <stdio.h>

#include "report.h"

int rep_report_main(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "speedlab report: not available in this build\n");
    return 1;
}

int rep_compare_main(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "speedlab compare: not available in this build\n");
    return 1;
}
