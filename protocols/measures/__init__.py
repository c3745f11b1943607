"""The mathematics of debates: metrics, distributions, labels, CRIT, contentiousness, the
agreement judge, the analyzer and the evaluation statistics."""
