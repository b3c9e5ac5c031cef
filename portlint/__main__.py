from portlint.cli import main

main()
