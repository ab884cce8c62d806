/* nop: a static program that does nothing, the cost of one process spawn
 * (fork, exec, the C library start-up, exit, wait) for bench/floor.sh. */
int
main (void)
{
  return 0;
}
