from portlint.cli import run

run()
