-- expect: did not finish
while true do end
