module usched/bench/peers/go

go 1.22
