from dpreg.cli import main

main()
