module example.com/citemod

go 1.26
