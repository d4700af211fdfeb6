/* main.c: the speedlab command. Everything is in speedlab_core (commands.h); this is the registry's entry. */
#include "commands.h"

int main(int argc, char **argv)
{
    return sl_main(argc, argv, sl_studies, sl_n_studies);
}
