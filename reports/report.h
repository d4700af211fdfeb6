/* reports/report.h: the report generator's entry points, called by the speedlab command.
 * Reports read results records only (docs/results-schema.md); they never run a kernel. */
#ifndef SL_REPORT_H
#define SL_REPORT_H

/* `speedlab report RESULTS_DIR... [--out DIR] [--format md,csv,tex]`; argv[0] is "report". */
int rep_report_main(int argc, char **argv);
/* `speedlab compare A B`; argv[0] is "compare". */
int rep_compare_main(int argc, char **argv);

#endif
